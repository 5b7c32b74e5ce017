package longconv

// topic is a kind of life event two friends tell each other about, with
// the words they use for it. Templates fill {o} (the object: the pet, the
// city, the dish), {d} (the detail the follow-up question draws out), {s}
// (the speaker a question asks about) and {m} (a month and year).
//
// Statements and replies say things the way people do (past tenses,
// plurals, "we went with"), questions the way people ask ("What did Ann
// adopt?"), so words match only after stemming, and the reply that holds
// an answer rarely shares a word with the question.
type topic struct {
	name     string
	objects  []string
	details  []string
	stmt     []string // the speaker tells the news
	ask      []string // the other asks for the detail
	reply    []string // the speaker gives it
	follow   []string // later news about the same object (arcs only)
	captions []string // an image shared with the news; captionQ[i] asks about captions[i]
	captionQ []string
	single   []string // asked of the news
	replyQ   []string // asked of the reply
	when     []string // "when" questions, asked of the news
	month    []string // asked of the news, naming its month
	multi    []string // asked of a whole arc
}

var topics = []topic{
	{
		name:     "pet",
		objects:  []string{"beagle", "kitten", "corgi", "parrot", "rabbit", "golden retriever", "tabby cat"},
		details:  []string{"Biscuit", "Pepper", "Mango", "Ziggy", "Luna", "Waffles", "Noodle", "Pickles"},
		stmt:     []string{"Big news: we adopted a {o} from the shelter on Saturday!", "So I finally adopted a little {o}, I've wanted one for years.", "Meet the newest member of the family, a {o} we adopted this weekend!"},
		ask:      []string{"No way! What did you name the {o}?", "Aww! Does the little one have a name yet?", "I'm melting. What are you calling him?"},
		reply:    []string{"We went with {d}. It just suited him.", "We named him {d}! The kids picked it.", "{d}, after my grandpa's old nickname."},
		captions: []string{"a {o} asleep on a blue couch", "a {o} wearing a red bandana in a backyard", "a {o} chewing a tennis ball on a rug"},
		captionQ: []string{"What color was the couch in the photo of {s}'s {o}?", "What was {s}'s {o} wearing in the photo?", "What was {s}'s {o} chewing in the picture?"},
		single:   []string{"What pet did {s} adopt?", "What kind of animal did {s} adopt from the shelter?"},
		replyQ:   []string{"What is the name of {s}'s {o}?", "What did {s} name the new {o}?"},
		when:     []string{"When did {s} adopt the {o}?"},
		month:    []string{"What animal did {s} adopt in {m}?"},
		multi:    []string{"What pets has {s} adopted?"},
	},
	{
		name:     "trip",
		objects:  []string{"Lisbon", "Kyoto", "Denver", "Oaxaca", "Reykjavik", "Montreal", "Seville", "Tallinn"},
		details:  []string{"the street food", "a sunset boat tour", "a tiny old bookshop", "the hiking trails outside town", "a jazz bar with no sign", "the night market", "a cooking class with a local family"},
		stmt:     []string{"Just got back from {o}! Honestly an amazing few days.", "We spent a long weekend visiting {o}, I'm still recovering.", "Back home after five days in {o}, already planning to go back."},
		ask:      []string{"Jealous! What was the highlight?", "What was your favorite part?", "Okay, tell me the one thing I shouldn't miss."},
		reply:    []string{"Honestly {d}. I'd go back just for that.", "Probably {d}, we went twice.", "{d}, hands down the best part of the trip."},
		captions: []string{"a colorful narrow street in {o} at sunset", "a view over the rooftops of {o} from a hill", "a plate of local food at a market in {o}"},
		captionQ: []string{"What did the street look like in {s}'s photo from {o}?", "Where was {s}'s photo of the rooftops of {o} taken from?", "What did {s} photograph at the market in {o}?"},
		single:   []string{"Which city did {s} visit?", "Where did {s} travel for a long weekend?"},
		replyQ:   []string{"What was the highlight of {s}'s trip to {o}?", "What did {s} like best about {o}?"},
		when:     []string{"When did {s} visit {o}?", "When did {s} travel to {o}?"},
		month:    []string{"Which city did {s} visit in {m}?", "Where did {s} go on a trip in {m}?"},
		multi:    []string{"Which cities has {s} traveled to?", "Where has {s} been on trips?"},
	},
	{
		name:     "cooking",
		objects:  []string{"sourdough bread", "ramen", "paella", "lemon tart", "lasagna", "pork dumplings", "banana bread"},
		details:  []string{"a spoon of miso", "smoked paprika", "brown butter", "a handful of fresh basil", "a pinch of cardamom", "letting it rest overnight"},
		stmt:     []string{"I baked my first {o} from scratch yesterday!", "Tried making {o} at home this week and it actually worked.", "Cooked {o} for six people on Sunday, nobody got sick, haha."},
		ask:      []string{"Impressive! What's the secret?", "Okay, what's the trick?", "Teach me! What made it so good?"},
		reply:    []string{"{d}, trust me on this.", "The secret is {d}.", "Don't tell anyone, but {d}."},
		captions: []string{"homemade {o} on a wooden table", "a tray of {o} fresh out of the oven"},
		captionQ: []string{"What was the homemade {o} in {s}'s photo sitting on?", "What did {s}'s photo of the {o} show coming out of the oven?"},
		single:   []string{"What dish did {s} make from scratch?", "What did {s} cook at home?"},
		replyQ:   []string{"What is {s}'s secret for the {o}?", "What trick does {s} use for {o}?"},
		when:     []string{"When did {s} make {o}?"},
		month:    []string{"What did {s} cook in {m}?", "What dish did {s} make in {m}?"},
		multi:    []string{"What dishes has {s} cooked at home?"},
	},
	{
		name:    "instrument",
		objects: []string{"cello", "piano", "ukulele", "drums", "violin", "trumpet"},
		details: []string{"Mrs. Okafor from the music school", "a retired jazz pianist down the street", "a college student who plays in a band", "my aunt, of all people"},
		stmt:    []string{"I signed up for {o} lessons, starting next week!", "Guess who bought a secondhand {o} and booked lessons? Me."},
		ask:     []string{"That's so cool! Who's teaching you?", "Love it. Who's your teacher?"},
		reply:   []string{"{d}. Very patient with me.", "My teacher is {d}, which is hilarious."},
		follow:  []string{"My {o} teacher finally let me play a real song this week.", "Practiced the {o} for two hours last night, the neighbors must hate me.", "I played the {o} at a tiny recital on Friday, hands shaking the whole time!", "Still at the {o} every evening, my fingers hurt but I'm improving."},
		single:  []string{"What instrument did {s} start learning?", "What lessons did {s} sign up for?"},
		replyQ:  []string{"Who teaches {s} to play the {o}?", "Who is {s}'s {o} teacher?"},
		multi:   []string{"How has {s}'s music practice been going over the months?", "What instrument has {s} kept practicing, and how is it going?"},
	},
	{
		name:     "race",
		objects:  []string{"half marathon", "charity 5k", "sprint triathlon", "trail race", "cycling race", "10k fun run"},
		details:  []string{"in under two hours", "third in my age group", "right behind a guy dressed as a banana", "without walking once", "with a new personal best"},
		stmt:     []string{"I ran the {o} this morning and survived!", "Finished my first {o} last Sunday!", "Did the {o} yesterday, my legs are jelly."},
		ask:      []string{"Whoa, congrats! How did you do?", "Amazing!! What was your time?"},
		reply:    []string{"Finished {d}, I'm thrilled.", "I came in {d}, not a bad result for a beginner."},
		captions: []string{"a runner crossing a finish line holding a medal", "a crowd of runners in orange shirts at a start line"},
		captionQ: []string{"What was {s} holding at the finish line in the photo?", "What color were the shirts in {s}'s photo of the {o}?"},
		single:   []string{"What race did {s} do?", "Which race did {s} finish?"},
		replyQ:   []string{"How did {s} do in the {o}?", "What was {s}'s result in the {o}?"},
		when:     []string{"When did {s} take part in the {o}?"},
		month:    []string{"What race did {s} take part in during {m}?"},
		multi:    []string{"Which races has {s} taken part in?"},
	},
	{
		name:    "job",
		objects: []string{"at a bakery", "at a design studio", "at the city library", "at a bike shop", "at a hospital lab", "at a small startup"},
		details: []string{"the early morning shift", "managing the front desk", "fixing whatever breaks", "running the social media", "training the new interns"},
		stmt:    []string{"I started a new job {o} this week!", "Guess who got hired {o}? Me!"},
		ask:     []string{"Congrats!! What will you be doing?", "Amazing! What's the role?"},
		reply:   []string{"Mostly {d}, which is new for me.", "My role is {d} for now."},
		single:  []string{"Where did {s} start a new job?", "Where was {s} hired?"},
		replyQ:  []string{"What does {s} do at the new job {o}?", "What is {s}'s role in the job {o}?"},
		when:    []string{"When did {s} start working {o}?"},
		month:   []string{"Where did {s} start working in {m}?"},
		multi:   []string{"Where has {s} worked?"},
	},
	{
		name:    "book",
		objects: []string{"The Salt Orchard", "A Map of Quiet Places", "Nine Winters", "The Glass Harbor", "Letters to a Lighthouse", "The Last Ferry"},
		details: []string{"the ending made me cry", "the middle dragged a bit", "the narrator is unforgettable", "I stayed up until 3am finishing it"},
		stmt:    []string{"I just finished reading {o}, what a book.", "Currently reading {o} before bed every night."},
		ask:     []string{"Ooh, would you recommend it?", "Is it any good?"},
		reply:   []string{"Yes, though {d}.", "Absolutely, I loved it, {d}."},
		single:  []string{"What book did {s} read?", "Which novel has {s} been reading?"},
		replyQ:  []string{"What did {s} think of {o}?"},
		month:   []string{"What book was {s} reading in {m}?"},
		multi:   []string{"Which books has {s} read?"},
	},
	{
		name:     "garden",
		objects:  []string{"tomatoes", "sunflowers", "basil", "strawberries", "peppers", "pumpkins"},
		details:  []string{"the squirrels ate half of them", "we had a week of hail", "I overwatered them at first", "the neighbor's cat sleeps in the bed"},
		stmt:     []string{"My {o} in the garden are finally growing!", "Planted {o} in the backyard this weekend."},
		ask:      []string{"Nice! Any trouble with them?", "How are they doing so far?"},
		reply:    []string{"Only problem: {d}.", "Mostly fine, except {d}."},
		captions: []string{"{o} growing in a raised wooden garden bed", "a basket full of freshly picked {o}"},
		captionQ: []string{"What were {s}'s {o} growing in, in the photo?", "What were the {o} in {s}'s photo collected in?"},
		single:   []string{"What is {s} growing in the garden?", "What did {s} plant in the backyard?"},
		replyQ:   []string{"What problem did {s} have with the {o}?"},
		when:     []string{"When did {s} plant the {o}?"},
		multi:    []string{"What has {s} grown in the garden?"},
	},
	{
		name:    "volunteer",
		objects: []string{"at an animal shelter", "at a food bank", "at a youth soccer league", "at the public library", "at a community garden"},
		details: []string{"walking the older dogs", "sorting donations", "coaching the under-tens", "reading to kids on Saturdays", "fixing the irrigation"},
		stmt:    []string{"I've been volunteering {o} on Saturdays.", "Spent the whole weekend volunteering {o}."},
		ask:     []string{"That's lovely. What do you do there?", "So good of you! What's your job there?"},
		reply:   []string{"Mostly {d}.", "Usually {d}, it's the best part of my week."},
		single:  []string{"Where does {s} volunteer?"},
		replyQ:  []string{"What does {s} do when volunteering {o}?"},
		when:    []string{"When did {s} start volunteering {o}?"},
		multi:   []string{"Where has {s} volunteered?"},
	},
	{
		name:     "painting",
		objects:  []string{"a sunset over the lake", "a portrait of my grandmother", "a field of poppies", "an old lighthouse", "the city skyline at night"},
		details:  []string{"watercolors", "oil paint", "acrylics", "charcoal and a bit of ink"},
		stmt:     []string{"I painted {o} last weekend, first time in ages.", "Finally finished painting {o}!"},
		ask:      []string{"Love that! What did you use?", "Gorgeous. What medium?"},
		reply:    []string{"{d} this time.", "I went with {d}, painted it in one sitting."},
		captions: []string{"a painting of {o} on an easel"},
		captionQ: []string{"What was {s}'s painting standing on in the photo?"},
		single:   []string{"What did {s} paint?", "What was the subject of {s}'s painting?"},
		replyQ:   []string{"What medium did {s} use for the painting?", "What did {s} paint {o} with?"},
		month:    []string{"What did {s} paint in {m}?"},
		multi:    []string{"What has {s} painted?"},
	},
	{
		name:    "concert",
		objects: []string{"The Paper Foxes", "Luna Static", "Midnight Orchard", "Copper Tides", "The Velvet Hours"},
		details: []string{"they played a brand new song", "it rained the whole time", "the drummer broke a stick twice", "we ended up right by the stage"},
		stmt:    []string{"Went to see {o} live last night!", "Saw {o} in concert on Friday, still buzzing."},
		ask:     []string{"Fun!! How was the show?", "Were they good live?"},
		reply:   []string{"So good, {d}.", "Incredible concert, {d}."},
		single:  []string{"Which band did {s} see in concert?", "What concert did {s} go to?"},
		replyQ:  []string{"How was the {o} concert for {s}?"},
		when:    []string{"When did {s} see {o} live?"},
		month:   []string{"Which band did {s} see live in {m}?"},
		multi:   []string{"Which bands has {s} seen live?"},
	},
	{
		name:    "class",
		objects: []string{"pottery", "Spanish", "photography", "rock climbing", "salsa dancing", "woodworking"},
		details: []string{"the teacher is hilarious", "I'm the oldest one there", "we meet every Tuesday night", "my first attempt was a disaster"},
		stmt:    []string{"I enrolled in a {o} class at the community center.", "Signed up for an evening {o} class, wish me luck."},
		ask:     []string{"Fun! How's it going so far?", "Ooh, how is it?"},
		reply:   []string{"Good! {d}.", "Honestly great, {d}. Best class I've taken."},
		follow:  []string{"My {o} class had a little showcase today.", "Still going to {o} every week, I'm actually improving!", "Skipped {o} this week and I missed it, weirdly."},
		single:  []string{"What class did {s} enroll in?", "What evening class did {s} sign up for?"},
		replyQ:  []string{"How is {s}'s {o} class going?"},
		multi:   []string{"Which hobby has {s} kept up with over several months?", "What class has {s} stuck with, and how has it been going?"},
	},
}

// Small talk: what fills a session between the news. Some of it uses the
// words the questions use ("name", "trip", "learn"), as real small talk
// does.
var (
	greetings = []string{"Hey {y}! Good to see you!", "Hi {y}, how have you been?", "{y}! It's been a while!", "Morning {y}! How's your week going?", "Hey {y}, got a minute to catch up?"}
	answers   = []string{"Hey {x}! Pretty good, just busy with work.", "Hi {x}! Things are hectic but good.", "Doing well, thanks {x}! What's new with you?", "Hey! Tired but happy. You?"}
	reactions = []string{"That's amazing!", "Wow, I love that.", "Haha, classic.", "So happy for you!", "That sounds wonderful.", "No way, that's awesome!", "Okay that made my day.", "You have to send me pictures."}
	closings  = []string{"I should go, talk soon!", "Take care, {y}!", "Bye for now, catch up next week?", "Gotta run, great chatting!", "Talk later, {y}!"}
	chatter   = [][2]string{
		{"I can't remember the name of that new café downtown.", "The one near the station? Their coffee is great."},
		{"Work adopted a new scheduling tool and it's chaos.", "Ugh, new tools are always painful at first."},
		{"My sister wants to plan a trip somewhere warm this winter.", "Tell her to pick somewhere with good food!"},
		{"I'm trying to learn to relax on weekends, haha.", "Same, it's harder than it sounds."},
		{"The office finally got someone to paint the hallway.", "About time, it was so gloomy."},
		{"The traffic this morning felt like a race.", "Mornings are the worst."},
		{"I keep meaning to read more but I'm always tired.", "Audiobooks saved me there."},
		{"Our neighbors' dog barks at everything that moves.", "At least it's a good alarm system."},
		{"I've been cooking the same three meals all month.", "Honestly, same. Pasta forever."},
		{"It rained all weekend here.", "We had sun for once!"},
		{"Did you watch the game last night?", "Missed it, was it good?"},
		{"I need a new hobby, work is eating my brain.", "You should try something creative."},
		{"My phone died in the middle of a call with my mom.", "Classic. Did she call back ten times?"},
		{"I finally cleaned out the garage.", "Find anything weird in there?"},
		{"Thinking about getting a bike for the commute.", "Do it, it changed my mornings."},
		{"The kids start school again next week.", "Enjoy the quiet!"},
	}
)
